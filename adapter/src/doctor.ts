export async function doctor(_args: string[], _json: boolean, _url: string): Promise<number> { return 0; }
