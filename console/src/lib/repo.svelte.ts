import type { Overview } from "@cohent/protocol";
import { getContext, setContext } from "svelte";
import type { ApiError } from "./api";

export interface RepoState {
  name: string;
  data: Overview | null;
  error: ApiError | null;
  refresh: () => Promise<void>;
}
const KEY = Symbol("repo");
export const provideRepo = (state: RepoState) => setContext(KEY, state);
export const useRepo = () => getContext<RepoState>(KEY);
