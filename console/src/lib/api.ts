import { session } from "./session.svelte";

/** A failure envelope from the backend, with its stable code. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function envelope<T>(res: Response): Promise<T> {
  let body: { ok?: boolean; data?: T; error?: { code: string; message: string } };
  try {
    body = await res.json();
  } catch {
    throw new ApiError("UNREACHABLE", `The Cohent server answered ${res.status} without JSON.`, res.status);
  }
  if (!body.ok) {
    if (body.error?.code === "UNAUTHENTICATED") session.signedIn = false;
    throw new ApiError(body.error?.code ?? "INTERNAL", body.error?.message ?? "Unknown error", res.status);
  }
  return body.data as T;
}

export async function get<T>(path: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { accept: "application/json" } });
  } catch {
    throw new ApiError("UNREACHABLE", "The Cohent server cannot be reached.", 0);
  }
  return envelope<T>(res);
}

export async function post<T>(path: string, body: unknown = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "x-cohent-csrf": session.csrfToken },
      body: JSON.stringify(body),
    });
  } catch {
    throw new ApiError("UNREACHABLE", "The Cohent server cannot be reached.", 0);
  }
  return envelope<T>(res);
}
