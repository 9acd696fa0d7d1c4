/** One catalog row as POST /admin/stocks takes it. */
export type StockRow = { symbol: string; name: string; price: string; currency?: string };

/**
 * Reads a stocks CSV: a header naming `symbol`, `name`, `price` and optionally `currency` (any
 * order, any case), then one stock per line. Fields may be double-quoted (RFC 4180: `""` is a quote),
 * so names with commas survive. Blank lines are skipped; a row missing a field is an error naming
 * its line, so a bad file imports nothing.
 */
export function parseStocksCsv(text: string): StockRow[] {
  const records = parseCsv(text.replace(/^\uFEFF/, ''));
  const header = records.shift()?.fields.map((h) => h.trim().toLowerCase()) ?? [];
  const column = (name: string) => header.indexOf(name);
  for (const required of ['symbol', 'name', 'price']) {
    if (column(required) < 0) throw new Error(`CSV header must name a "${required}" column`);
  }
  return records.map(({ line, fields }) => {
    const get = (name: string) => (column(name) < 0 ? '' : (fields[column(name)] ?? '').trim());
    const row: StockRow = { symbol: get('symbol'), name: get('name'), price: get('price') };
    if (!row.symbol || !row.name || !row.price)
      throw new Error(`line ${line}: symbol, name and price are required`);
    const currency = get('currency');
    return currency ? { ...row, currency } : row;
  });
}

type CsvRecord = { line: number; fields: string[] };

function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  const endRecord = () => {
    fields.push(field);
    if (fields.some((f) => f.trim() !== '')) records.push({ line: start, fields });
    fields = [];
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRecord();
      line++;
      start = line;
    } else field += c;
  }
  if (quoted) throw new Error(`line ${start}: unterminated quoted field`);
  endRecord();
  return records;
}
