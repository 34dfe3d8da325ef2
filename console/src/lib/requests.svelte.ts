import { apiError, get } from "./api";
import { live } from "./live.svelte";

/** What a page holds of its requests: their data, the last failure's message until a success, and whether an action runs. */
export interface Held<T> {
  data: T | null;
  readonly error: string;
  readonly busy: boolean;
  /** Runs a button's action: `busy` meanwhile (the buttons are disabled), then clears or sets `error`. */
  run(act: () => Promise<void>): Promise<void>;
}

/** The state behind a Held, with the rule both callers share: a success clears `error`, a failure sets it. */
function hold<T>() {
  const s = $state<{ data: T | null; error: string; busy: boolean }>({ data: null, error: "", busy: false });
  const settle = (act: () => Promise<void>) =>
    act().then(
      () => void (s.error = ""),
      (e: unknown) => void (s.error = apiError(e).message),
    );
  const held: Held<T> = {
    get data() {
      return s.data;
    },
    set data(v) {
      s.data = v;
    },
    get error() {
      return s.error;
    },
    get busy() {
      return s.busy;
    },
    async run(act) {
      s.busy = true;
      await settle(act);
      s.busy = false;
    },
  };
  return { held, settle };
}

/** A button's action with nothing fetched. */
export const action = <T = never>(): Held<T> => hold<T>().held;

/** One GET a page shows, fetched again whenever the live feed moves or `path()` changes; a null path fetches nothing. */
export function fetched<T>(path: () => string | null): Held<T> {
  const { held, settle } = hold<T>();
  $effect(() => {
    void live.version;
    const p = path();
    if (p === null) return;
    void settle(async () => {
      held.data = await get<T>(p);
    });
  });
  return held;
}
