import { getContext, setContext } from "svelte";
import type { Overview } from "./types";

export interface RepoState {
  name: string;
  data: Overview | null;
  error: string;
  refresh: () => Promise<void>;
}
const KEY = Symbol("repo");
export const provideRepo = (state: RepoState) => setContext(KEY, state);
export const useRepo = () => getContext<RepoState>(KEY);
