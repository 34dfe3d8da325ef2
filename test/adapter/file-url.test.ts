import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { fileUrlOf, pathOfFileUrl } from "../../adapter/src/loader/loader-handoff.js";

/** The loader's own URL and back, without node:url (loader-handoff.ts): as Node's own functions answer. */
describe("fileUrlOf: the loader's own URL, as pathToFileURL answers", () => {
  const paths = [
    "/tmp/a/b.cjs",
    "/home/u/repo/.cohent/cohent.cjs",
    "/a b/c.cjs",
    "/a%b/c",
    "/a#b/c",
    "/a?b",
    "/é/x",
    "/a~b/x_y-z.cjs",
    "/a//b",
    "/a/./b",
    "/a/../b",
    "/a/.",
    "/a/..",
    "/a/...",
    "/..a/b",
    "/",
    "/a/",
    "relative/path",
  ];
  for (const p of paths)
    it(JSON.stringify(p), () => {
      expect(fileUrlOf(p)).toBe(pathToFileURL(p).href);
    });
});

describe("pathOfFileUrl: the way back, as fileURLToPath answers", () => {
  const urls = [
    "file:///tmp/a/b.cjs",
    "file:///home/u/repo/.cohent/cohent.cjs",
    "file:///a%20b/c.cjs",
    "file:///%C3%A9/x",
    "file:///a/./b",
    "file:///a/../b",
    "file:///a//b",
    "file://localhost/a/b",
    "file:///a/b?x=1",
    "file:///a/b#h",
    "file:///",
  ];
  for (const u of urls)
    it(u, () => {
      expect(pathOfFileUrl(u)).toBe(fileURLToPath(u));
    });
  for (const p of ["/tmp/a/b.cjs", "/a b/c.cjs", "/é/x", "/a~b/x_y-z.cjs"])
    it(`round trip ${p}`, () => {
      expect(pathOfFileUrl(fileUrlOf(p))).toBe(p);
    });
});
