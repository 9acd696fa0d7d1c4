import { describe, expect, it } from 'vitest';
import {
  parseQueueTimeoutCallback,
  parseResultCallback,
  parseStkCallback,
  statusOfQueriedTransaction,
} from '../../../src/services/payments/providers/mpesa/callbacks.ts';
import { mapResultCode } from '../../../src/services/payments/providers/mpesa/result-codes.ts';

// Daraja's documented samples, verbatim.
const stkSuccess = {
  Body: {
    stkCallback: {
      MerchantRequestID: '29115-34620561-1',
      CheckoutRequestID: 'ws_CO_191220191020363925',
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      CallbackMetadata: {
        Item: [
          { Name: 'Amount', Value: 1.0 },
          { Name: 'MpesaReceiptNumber', Value: 'NLJ7RT61SV' },
          { Name: 'TransactionDate', Value: 20191219102115 },
          { Name: 'PhoneNumber', Value: 254708374149 },
        ],
      },
    },
  },
};
const stkCancelled = {
  Body: {
    stkCallback: {
      MerchantRequestID: 'f1e2-4b95-a71d-b30d3cdbb7a7942864',
      CheckoutRequestID: 'ws_CO_21072024125243250722943992',
      ResultCode: 1032,
      ResultDesc: 'Request cancelled by user',
    },
  },
};
const b2cSuccess = {
  Result: {
    ResultType: 0,
    ResultCode: 0,
    ResultDesc: 'The service request is processed successfully.',
    OriginatorConversationID: '53e3-4aa8-9fe0-8fb5e4092cdd3533373',
    ConversationID: 'AG_20240706_2010364430d9bbdaf872',
    TransactionID: 'SG632NMUAB',
    ResultParameters: {
      ResultParameter: [
        { Key: 'TransactionAmount', Value: 10 },
        { Key: 'TransactionReceipt', Value: 'SG632NMUAB' },
        { Key: 'ReceiverPartyPublicName', Value: '254705912645 - NICHOLAS JOHN SONGOK' },
        { Key: 'TransactionCompletedDateTime', Value: '06.07.2024 22:48:52' },
        { Key: 'B2CUtilityAccountAvailableFunds', Value: 8959269.6 },
        { Key: 'B2CWorkingAccountAvailableFunds', Value: 1199371.0 },
        { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
        { Key: 'B2CChargesPaidAccountAvailableFunds', Value: -1980.0 },
      ],
    },
    ReferenceData: {
      ReferenceItem: {
        Key: 'QueueTimeoutURL',
        Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
      },
    },
  },
};
const b2cFailure = {
  Result: {
    ResultType: 0,
    ResultCode: 2001,
    ResultDesc: 'The initiator information is invalid.',
    OriginatorConversationID: '53e3-4aa8-9fe0-8fb5e4092cdd3544366',
    ConversationID: 'AG_20240707_201062f6f6f5804f7a33',
    TransactionID: 'SG722NMVXQ',
    ReferenceData: {
      ReferenceItem: {
        Key: 'QueueTimeoutURL',
        Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
      },
    },
  },
};
const b2cRequestEcho = {
  OriginatorConversationID: '600997_Test_32et3241ed8yu',
  InitiatorName: 'testapi',
  SecurityCredential: 'RC6E9WDxXR4b9X2c6z3gp0oC5Th ==',
  CommandID: 'BusinessPayment',
  Amount: '10',
  PartyA: '600992',
  PartyB: '254705912645',
  Remarks: 'remarked',
  QueueTimeOutURL: 'https://mydomain.com/path',
  ResultURL: 'https://mydomain.com/path',
  Occassion: 'ChristmasPay',
};

describe('STK callback parser', () => {
  it('reads the documented success body by item Name', () => {
    const parsed = parseStkCallback(stkSuccess);
    expect(parsed).toEqual({
      ok: true,
      value: expect.objectContaining({
        status: 'SUCCESS',
        code: '0',
        reason: null,
        checkoutRequestId: 'ws_CO_191220191020363925',
        merchantRequestId: '29115-34620561-1',
        payment: {
          amount: 1,
          receipt: 'NLJ7RT61SV',
          transactionDate: '20191219102115',
          phoneNumber: '254708374149',
        },
      }),
    });
  });

  it('reads the documented cancellation (no metadata) as CANCELLED with the reason', () => {
    const parsed = parseStkCallback(stkCancelled);
    expect(parsed.ok && parsed.value).toMatchObject({
      status: 'CANCELLED',
      code: '1032',
      reason: 'M-Pesa 1032: Request cancelled by user',
      payment: null,
    });
  });

  it('takes the raw text too, items in any order, and an item without Value (older Balance)', () => {
    const items = [...stkSuccess.Body.stkCallback.CallbackMetadata.Item].reverse();
    const body = structuredClone(stkSuccess);
    body.Body.stkCallback.CallbackMetadata.Item = [{ Name: 'Balance' } as never, ...items];
    const parsed = parseStkCallback(JSON.stringify(body));
    expect(parsed.ok && parsed.value.payment?.receipt).toBe('NLJ7RT61SV');
    expect(parsed.ok && 'Balance' in parsed.value.items).toBe(true);
  });

  it('reads a string code such as "SFC_IC0003" as FAILED, naming it', () => {
    const body = structuredClone(stkCancelled) as { Body: { stkCallback: Record<string, unknown> } };
    body.Body.stkCallback.ResultCode = 'SFC_IC0003';
    body.Body.stkCallback.ResultDesc = 'The operator does not exist.';
    const parsed = parseStkCallback(body);
    expect(parsed.ok && parsed.value).toMatchObject({
      status: 'FAILED',
      code: 'SFC_IC0003',
      reason: 'M-Pesa SFC_IC0003: The operator does not exist.',
    });
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an empty string', ''],
    ['text that is not JSON', '{"Body": '],
    ['an array', []],
    ['an empty object', {}],
    ['a Body without stkCallback', { Body: {} }],
    [
      'a boolean ResultCode',
      { Body: { stkCallback: { ...stkCancelled.Body.stkCallback, ResultCode: true } } },
    ],
    [
      'a fractional ResultCode',
      { Body: { stkCallback: { ...stkCancelled.Body.stkCallback, ResultCode: 0.5 } } },
    ],
    [
      'no CheckoutRequestID',
      { Body: { stkCallback: { ...stkCancelled.Body.stkCallback, CheckoutRequestID: '' } } },
    ],
    [
      'success without metadata',
      { Body: { stkCallback: { ...stkSuccess.Body.stkCallback, CallbackMetadata: undefined } } },
    ],
    [
      'success without a receipt',
      {
        Body: {
          stkCallback: {
            ...stkSuccess.Body.stkCallback,
            CallbackMetadata: { Item: [{ Name: 'Amount', Value: 1 }] },
          },
        },
      },
    ],
    [
      'Item that is not a list',
      { Body: { stkCallback: { ...stkSuccess.Body.stkCallback, CallbackMetadata: { Item: 'x' } } } },
    ],
  ])('returns a failure, never throws, on %s', (_label, body) => {
    const parsed = parseStkCallback(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(/\S/);
  });
});

describe('B2C Result and QueueTimeOut parsers', () => {
  it('reads the documented B2C success with its parameters', () => {
    const parsed = parseResultCallback(b2cSuccess);
    expect(parsed.ok && parsed.value).toMatchObject({
      status: 'SUCCESS',
      originatorConversationId: '53e3-4aa8-9fe0-8fb5e4092cdd3533373',
      conversationId: 'AG_20240706_2010364430d9bbdaf872',
      transactionId: 'SG632NMUAB',
      parameters: { TransactionAmount: 10, TransactionCompletedDateTime: '06.07.2024 22:48:52' },
    });
  });

  it('reads the documented B2C failure (2001, no parameters) as FAILED with the reason', () => {
    const parsed = parseResultCallback(b2cFailure);
    expect(parsed.ok && parsed.value).toMatchObject({
      status: 'FAILED',
      code: '2001',
      reason: 'M-Pesa 2001: The initiator information is invalid.',
      parameters: {},
    });
  });

  it('accepts a string ResultCode and a single ResultParameter object', () => {
    const body = structuredClone(b2cSuccess) as { Result: Record<string, unknown> };
    body.Result.ResultCode = 'SFC_IC0003';
    body.Result.ResultParameters = { ResultParameter: { Key: 'TransactionStatus', Value: 'Completed' } };
    const parsed = parseResultCallback(body);
    expect(parsed.ok && parsed.value).toMatchObject({ status: 'FAILED', code: 'SFC_IC0003' });
    expect(parsed.ok && parsed.value.parameters).toEqual({ TransactionStatus: 'Completed' });
  });

  it.each([
    ['null', null],
    ['an empty object', {}],
    [
      'no OriginatorConversationID',
      { Result: { ...b2cFailure.Result, OriginatorConversationID: undefined } },
    ],
    ['a ResultCode object', { Result: { ...b2cFailure.Result, ResultCode: { code: 1 } } }],
    [
      'a parameter without Key',
      { Result: { ...b2cSuccess.Result, ResultParameters: { ResultParameter: [{ Value: 1 }] } } },
    ],
  ])('returns a failure on %s', (_label, body) => {
    expect(parseResultCallback(body).ok).toBe(false);
  });

  it('reads the QueueTimeOut request-echo by its OriginatorConversationID, dropping the credential', () => {
    const parsed = parseQueueTimeoutCallback(b2cRequestEcho);
    expect(parsed).toEqual({
      ok: true,
      value: {
        originatorConversationId: '600997_Test_32et3241ed8yu',
        commandId: 'BusinessPayment',
        amount: '10',
        partyB: '254705912645',
      },
    });
    expect(parseQueueTimeoutCallback({ ...b2cRequestEcho, OriginatorConversationID: undefined }).ok).toBe(
      false,
    );
  });

  it('reads a Transaction Status answer: Completed SUCCESS, Failed FAILED, Pending PENDING, another word nothing, a code its status', () => {
    const result = (parameters: Record<string, unknown>, code: number | string = 0) => {
      const parsed = parseResultCallback({
        Result: {
          ...b2cFailure.Result,
          ResultCode: code,
          ResultParameters: { ResultParameter: [parameters] },
        },
      });
      if (!parsed.ok) throw new Error(parsed.error);
      return statusOfQueriedTransaction(parsed.value);
    };
    expect(result({ Key: 'TransactionStatus', Value: 'Completed' })).toBe('SUCCESS');
    expect(result({ Key: 'TransactionStatus', Value: ' completed ' })).toBe('SUCCESS');
    expect(result({ Key: 'TransactionStatus', Value: 'Failed' })).toBe('FAILED');
    expect(result({ Key: 'TransactionStatus', Value: 'Pending' })).toBe('PENDING');
    // Undocumented words are not read as paid or failed, however they sound.
    for (const word of ['Declined', 'Cancelled', 'Reversed', 'Expired', ''])
      expect(result({ Key: 'TransactionStatus', Value: word })).toBeUndefined();
    expect(result({ Key: 'ReceiptNo', Value: 'SG632NMUAB' })).toBeUndefined();
    expect(result({ Key: 'TransactionStatus', Value: 'Completed' }, 2001)).toBe('FAILED');
  });
});

describe('result codes', () => {
  it.each([
    [0, 'SUCCESS', null],
    ['0', 'SUCCESS', null],
    [1032, 'CANCELLED', 'M-Pesa 1032: Request cancelled by user.'],
    ['1037', 'FAILED', 'M-Pesa 1037: DS timeout user cannot be reached.'],
    [1019, 'FAILED', 'M-Pesa 1019: Transaction has expired.'],
    [1, 'FAILED', 'M-Pesa 1: The balance is insufficient for the transaction.'],
    [2001, 'FAILED', 'M-Pesa 2001: The initiator information is invalid.'],
    ['SFC_IC0003', 'FAILED', 'M-Pesa SFC_IC0003: The operator does not exist.'],
    [4242, 'FAILED', 'M-Pesa 4242: unknown result code'],
  ] as const)('%s is %s', (code, status, reason) => {
    expect(mapResultCode(code)).toEqual({ status, code: String(code), reason });
  });

  it("prefers the body's own description", () => {
    expect(mapResultCode(1, 'Insufficient balance').reason).toBe('M-Pesa 1: Insufficient balance');
  });
});
