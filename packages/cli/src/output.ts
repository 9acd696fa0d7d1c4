/** --json prints exactly what the API answered; otherwise a compact human view. */
export function printResult(value: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) process.stdout.write('(none)\n');
    for (const item of value) process.stdout.write(`${summarize(item)}\n`);
    return;
  }
  if (value && typeof value === 'object') {
    for (const [key, field] of Object.entries(value)) {
      process.stdout.write(`${key}: ${typeof field === 'object' ? JSON.stringify(field) : String(field)}\n`);
    }
    return;
  }
  process.stdout.write(`${String(value)}\n`);
}

function summarize(item: unknown): string {
  if (!item || typeof item !== 'object') return String(item);
  const record = item as Record<string, unknown>;
  return ['id', 'name', 'clientId', 'symbol', 'status', 'isActive']
    .filter((k) => record[k] !== undefined)
    .map((k) => `${k}=${String(record[k])}`)
    .join('  ');
}
