import { describe, expect, it } from 'vitest';
import { parseStocksCsv } from '../src/stock-csv.ts';

describe('partner-api stocks import: CSV', () => {
  it('reads a header in any order and case, quoted fields, CRLF and blank lines', () => {
    const csv =
      '\uFEFFPrice,Symbol,Name,Currency\r\n28.55,SCOM,Safaricom,KES\r\n\r\n7.86,KPLC,"Kenya Power, ""KPLC""",\n';
    expect(parseStocksCsv(csv)).toEqual([
      { symbol: 'SCOM', name: 'Safaricom', price: '28.55', currency: 'KES' },
      { symbol: 'KPLC', name: 'Kenya Power, "KPLC"', price: '7.86' },
    ]);
  });

  it('currency is optional; missing columns and fields are errors naming the line', () => {
    expect(parseStocksCsv('symbol,name,price\nEQTY,Equity Group,47.80')).toEqual([
      { symbol: 'EQTY', name: 'Equity Group', price: '47.80' },
    ]);
    expect(() => parseStocksCsv('symbol,name\nEQTY,Equity')).toThrow('"price" column');
    expect(() => parseStocksCsv('symbol,name,price\nEQTY,Equity,47\nKCB,,42')).toThrow('line 3');
    expect(() => parseStocksCsv('symbol,name,price\nKCB,"KCB Group,42')).toThrow('unterminated');
  });
});
