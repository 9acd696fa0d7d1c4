import { ErrorLabel, type ValidationDetail } from '@partner-api/contract';
import type { z } from 'zod';

/** A failure with a spec-defined answer. Thrown anywhere; turned into one of the three body shapes at the edge. */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly label: string,
    readonly detail?: string,
    readonly details?: ValidationDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail ?? label);
  }

  body(): Record<string, unknown> {
    if (this.details) return { error: this.label, details: this.details };
    if (this.detail !== undefined) return { error: this.label, message: this.detail };
    return { error: this.label };
  }
}

export const unauthorized = (message: string, headers?: Record<string, string>) =>
  new AppError(401, ErrorLabel.unauthorized, message, undefined, headers);

export function validationFailed(details: ValidationDetail[]): AppError {
  return new AppError(400, ErrorLabel.validation, undefined, details);
}

/** One entry per invalid field; unknown fields each get an entry naming them. */
export function detailsFromZod(error: z.ZodError, prefix: string[] = []): ValidationDetail[] {
  const details: ValidationDetail[] = [];
  const seen = new Set<string>();
  const push = (field: string, message: string) => {
    if (seen.has(field)) return;
    seen.add(field);
    details.push({ field, message });
  };
  for (const issue of error.issues) {
    const field = [...prefix, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) push(field ? `${field}.${key}` : key, 'Unknown field');
    } else {
      push(field, issue.message);
    }
  }
  return details;
}
