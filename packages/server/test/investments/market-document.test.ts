import SwaggerParser from '@apidevtools/swagger-parser';
import { buildTestApp, type TestApp } from '@partner-api/testkit/app.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/openapi/types.ts';
import { openApiDocumentOf } from '../../src/routes/docs.ts';
import { INVESTMENTS_ENV } from './market-support.ts';

const MARKET_OPERATIONS = {
  '/investment-types': 'listInvestmentTypes',
  '/instruments': 'listInstruments',
  '/instruments/{instrumentId}': 'getInstrument',
  '/instruments/{instrumentId}/prices': 'getInstrumentPrices',
};

describe('the market operations in the OpenAPI document', () => {
  let on: TestApp;
  let off: TestApp;
  let document: OpenApiDocument;
  beforeAll(async () => {
    [on, off] = await Promise.all([buildTestApp('pglite', INVESTMENTS_ENV), buildTestApp('pglite')]);
    document = openApiDocumentOf(on.app)!;
  });
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  it('lists them with INVESTMENTS_PREVIEW, each read-only, signed and marked preview, and still validates', async () => {
    for (const [path, operationId] of Object.entries(MARKET_OPERATIONS)) {
      const operation = document.paths[path]?.get;
      expect(Object.keys(document.paths[path] ?? {})).toEqual(['get']);
      expect(operation).toMatchObject({ operationId, 'x-preview': true, tags: ['Investments (preview)'] });
      expect(operation?.responses).toHaveProperty('200');
    }
    for (const name of ['Instrument', 'LatestPrice', 'InvestmentType', 'DailyBar'])
      expect(document.components.schemas).toHaveProperty(name);
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it('leaves them out without it', () => {
    const without = openApiDocumentOf(off.app)!;
    for (const path of Object.keys(MARKET_OPERATIONS)) expect(without.paths).not.toHaveProperty(path);
    expect(without.components.schemas).not.toHaveProperty('Instrument');
  });
});
