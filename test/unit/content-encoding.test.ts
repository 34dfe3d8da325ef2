import { describe, expect, it } from "vitest";
import { bodyEncoding } from "@cohent/protocol";

describe("the Content-Encoding a request body may carry", () => {
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["identity", "identity"],
    ["IDENTITY, identity", "identity"],
    ["gzip", "gzip"],
    ["GZip", "gzip"],
    [" gzip ", "gzip"],
    ["x-gzip", "gzip"],
    ["gzip, identity", "gzip"],
    ["deflate", "deflate"],
    ["br", null],
    ["compress", null],
    ["x-compress", null],
    ["zstd", null],
    ["x-foo", null],
    ["*", null],
    ["gzip, gzip", null],
    ["deflate, br", null],
    ["gzip;q=1", null],
  ] as const)("%j -> %j", (header, decoder) => {
    expect(bodyEncoding(header)).toBe(decoder);
  });
});
