import type { RequestOptions, RequestSender } from '../request-sender.ts';
import type { UssdResponse } from '../types.ts';

/** POST /ussd/session and POST /ussd/process: the menu state machine, one move per call. */
export class UssdResource {
  constructor(private readonly sender: RequestSender) {}

  /** Opens a session for a customer of this organization: the HOME menu (or ERROR, with HTTP 200). */
  async start(customerId: string, options?: RequestOptions): Promise<UssdResponse> {
    const spec = {
      method: 'POST',
      path: '/ussd/session',
      body: { customerId },
      auth: 'signed',
      idempotent: true,
    } as const;
    return (await this.sender.request<UssdResponse>(spec, options)).body;
  }

  /** Advances a session with a choice: a key of the current menu or free text (1 to 10 alphanumerics). */
  async process(sessionId: string, choice: string, options?: RequestOptions): Promise<UssdResponse> {
    const spec = {
      method: 'POST',
      path: '/ussd/process',
      body: { sessionId, choice },
      auth: 'signed',
      idempotent: true,
    } as const;
    return (await this.sender.request<UssdResponse>(spec, options)).body;
  }
}
