export { consoleConfigFromEnv, type ConsoleConfig } from "./config.js";
export { consoleRoutes, SESSION_COOKIE, CSRF_HEADER } from "./routes.js";
export { consoleUi } from "./ui.js";
