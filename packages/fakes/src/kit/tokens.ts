type Token<Extra> = Extra & { expiresAt: number; usesLeft: number };

/**
 * The OAuth tokens a fake issued. A token `expiresEarly` opens one request only (the provider
 * revoked it before its `expires_in`); `expireAll` does that to every token issued so far.
 */
export class TokenStore<Extra extends object = object> {
  readonly #tokens = new Map<string, Token<Extra>>();

  issue(token: string, ttlSeconds: number, expiresEarly: boolean, extra: Extra) {
    this.#tokens.set(token, {
      ...extra,
      expiresAt: Date.now() + ttlSeconds * 1000,
      usesLeft: expiresEarly ? 1 : Number.POSITIVE_INFINITY,
    });
  }

  clear() {
    this.#tokens.clear();
  }

  expireAll() {
    for (const entry of this.#tokens.values()) entry.usesLeft = 0;
  }

  /**
   * Whether the `Authorization: Bearer` header opens this request (`fits`: for this product, say);
   * an accepted token has one use fewer.
   */
  accepts(authorization: string | undefined, fits: (token: Extra) => boolean = () => true): boolean {
    const match = /^Bearer (.+)$/.exec(authorization ?? '');
    const entry = match ? this.#tokens.get(match[1]!) : undefined;
    if (!entry || !fits(entry) || entry.expiresAt <= Date.now() || entry.usesLeft <= 0) return false;
    entry.usesLeft -= 1;
    return true;
  }
}
