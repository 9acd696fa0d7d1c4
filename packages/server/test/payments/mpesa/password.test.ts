import { describe, expect, it } from 'vitest';
import { darajaTimestamp, stkPassword } from '../../../src/services/payments/providers/mpesa/password.ts';

describe('Daraja password and timestamp', () => {
  it('reproduces the official sample Password (shortcode 174379, sandbox passkey, 20210628092408)', () => {
    expect(
      stkPassword(
        '174379',
        'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919',
        '20210628092408',
      ),
    ).toBe(
      'MTc0Mzc5YmZiMjc5ZjlhYTliZGJjZjE1OGU5N2RkNzFhNDY3Y2QyZTBjODkzMDU5YjEwZjc4ZTZiNzJhZGExZWQyYzkxOTIwMjEwNjI4MDkyNDA4',
    );
  });

  it('writes the Timestamp in East Africa Time (UTC+3), whatever the machine zone', () => {
    expect(darajaTimestamp(new Date('2021-06-28T06:24:08Z'))).toBe('20210628092408');
    // The day, month and year roll over at 21:00 UTC.
    expect(darajaTimestamp(new Date('2024-12-31T21:30:05Z'))).toBe('20250101003005');
  });
});
