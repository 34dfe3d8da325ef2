import type { ErrorCode } from "@cohent/protocol/codes";
import { CSRF_HEADER } from "@cohent/protocol/console-constants";
import { session } from "./session-state.svelte";

/** A failure envelope from the backend. Pages branch on its stable `code`, never on its message. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The error a page shows for anything a request threw. */
export const apiError = (e: unknown): ApiError =>
  e instanceof ApiError ? e : new ApiError("INTERNAL", e instanceof Error ? e.message : String(e), 0);

const unreachable = (status: number, message = "The Cohent server cannot be reached.") =>
  new ApiError("CONTROL_PLANE_UNREACHABLE", message, status);

async function envelope<T>(res: Response): Promise<T> {
  let body: { ok?: boolean; data?: T; error?: { code: ErrorCode; message: string } };
  try {
    body = await res.json();
  } catch {
    throw unreachable(res.status, `The Cohent server answered ${res.status} without JSON.`);
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
    throw unreachable(0);
  }
  return envelope<T>(res);
}

export async function post<T>(path: string, body: unknown = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        [CSRF_HEADER]: session.csrfToken,
      },
      body: JSON.stringify(body),
    });
  } catch {
    throw unreachable(0);
  }
  return envelope<T>(res);
}
