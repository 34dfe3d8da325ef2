export async function initCommand(_args: string[], _json: boolean, _url: string): Promise<number> { return 0; }
