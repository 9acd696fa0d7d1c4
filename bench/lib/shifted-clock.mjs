/**
 * Shifts this process's wall clock by BENCH_CLOCK_OFFSET_MS (`node --import`): `Date.now()` and
 * `new Date()` read now + the offset; a Date of a given time is unchanged; timers and
 * `performance.now()` are untouched. The bench and the server it measures load it with the same
 * offset (`npm run bench -- --clock-at=…`), so that market hours can be measured enforced at any
 * hour. PostgreSQL's `now()` is not shifted.
 */
const offset = Number(process.env.BENCH_CLOCK_OFFSET_MS ?? 0);
if (offset) {
  const RealDate = globalThis.Date;
  class ShiftedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = ShiftedDate;
}
