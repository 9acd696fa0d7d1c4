/**
 * Content negotiation of a report (GET /reports/{id}): PDF only when the Accept header ranks
 * application/pdf above application/json (RFC 9110 §12.5.1: the most specific range gives a type
 * its q); JSON otherwise, as with no Accept header, `*\/*` or a tie.
 */
export function prefersPdf(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    return { range, q: Number.isFinite(weight) ? weight : 0 };
  });
  return qualityOf(ranges, 'application/pdf') > qualityOf(ranges, 'application/json');
}

function qualityOf(ranges: { range: string; q: number }[], type: string): number {
  const [major] = type.split('/');
  const exact = ranges.find((r) => r.range === type);
  const family = ranges.find((r) => r.range === `${major}/*`);
  const any = ranges.find((r) => r.range === '*/*');
  return (exact ?? family ?? any)?.q ?? 0;
}
