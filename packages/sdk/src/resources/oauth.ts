import type { TokenResponse } from '@partner-api/contract';
import { AuthenticationError } from '../errors.ts';
import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type { TokenManager } from '../token-manager.ts';
import type { MeResponse, RevokeResponse } from '../types.ts';

/** POST /oauth/token, GET /oauth/me, POST /oauth/revoke. */
export class OAuthResource {
  constructor(
    private readonly sender: RequestSender,
    private readonly tokens: TokenManager,
  ) {}

  /** Fetches a new token now and caches it (other calls fetch one lazily; there is no need to call this). */
  token(): Promise<TokenResponse> {
    return this.tokens.refresh();
  }

  /** The organization of the credential, with its active credentials. */
  async me(options?: RequestOptions): Promise<MeResponse> {
    return (
      await this.sender.request<MeResponse>({ method: 'GET', path: '/oauth/me', auth: 'signed' }, options)
    ).body;
  }

  /**
   * Blacklists the cached token (or `options.token`, e.g. one that leaked). The next call fetches a
   * new token. Signed without body headers, as the spec requires of revoke.
   */
  async revoke(options: RequestOptions & { token?: string } = {}): Promise<RevokeResponse> {
    const token = options.token ?? (await this.tokens.get());
    try {
      const response = await this.sender.request<RevokeResponse>(
        { method: 'POST', path: '/oauth/revoke', auth: 'signed', token },
        options,
      );
      await this.tokens.invalidate(token);
      return response.body;
    } catch (error) {
      // Already revoked or expired: either way this client must not use it again.
      if (error instanceof AuthenticationError) await this.tokens.invalidate(token);
      throw error;
    }
  }
}
