import { OAuth2Client } from "arctic";
import type { ConsoleConfig } from "../config.js";

type GitHubConfig = NonNullable<ConsoleConfig["github"]>;

/**
 * GitHub OAuth through arctic's OAuth2 client, with the endpoints taken from
 * the configuration so an Enterprise host or a local stand-in can serve them.
 */
export function githubOAuth(config: GitHubConfig, redirectUri: string) {
  const client = new OAuth2Client(config.clientId, config.clientSecret, redirectUri);
  return {
    // read:user names the person; repo lets GitHub report push rights on private repositories too.
    authorizationUrl: (state: string) =>
      client.createAuthorizationURL(`${config.webUrl}/login/oauth/authorize`, state, ["read:user", "repo"]),
    exchange: async (code: string) =>
      (
        await client.validateAuthorizationCode(`${config.webUrl}/login/oauth/access_token`, code, null)
      ).accessToken(),
  };
}

async function api<T>(
  config: GitHubConfig,
  token: string,
  route: string,
): Promise<{ status: number; body: T | null }> {
  const res = await fetch(`${config.apiUrl}${route}`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/vnd.github+json",
      "user-agent": "cohent",
      "x-github-api-version": "2022-11-28",
    },
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: res.ok ? ((await res.json()) as T) : null };
}

export async function githubLogin(config: GitHubConfig, token: string): Promise<string> {
  const { body } = await api<{ login?: string }>(config, token, "/user");
  if (!body?.login) throw new Error("GitHub did not name the signed-in person");
  return body.login;
}

/** True only when GitHub says this person can push to owner/name. */
export async function githubCanPush(config: GitHubConfig, token: string, repo: string): Promise<boolean> {
  const [owner, name] = repo.split("/") as [string, string];
  const { body } = await api<{ permissions?: { push?: boolean; admin?: boolean } }>(
    config,
    token,
    `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`,
  );
  return body?.permissions?.push === true || body?.permissions?.admin === true;
}
