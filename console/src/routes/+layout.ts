// The Control Room is a client-rendered app over the console JSON/SSE API.
export const ssr = false;
export const prerender = false;
