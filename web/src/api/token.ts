/**
 * Where RTK Query and the socket get the bearer token. The signed-in app registers the auth provider's
 * getter at start (Clerk refreshes its tokens; the dev token is read from localStorage).
 */
let provider: () => Promise<string | null> = async () => null;

export function setTokenProvider(getToken: () => Promise<string | null>): void {
  provider = getToken;
}

export function getToken(): Promise<string | null> {
  return provider();
}
