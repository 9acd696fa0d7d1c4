import type { Locator, Page, Request } from 'playwright-core';

/** Opens /docs and waits until Swagger UI has rendered the operations. */
export async function openReference(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/docs`);
  await page.waitForSelector('.opblock-summary-path');
}

export type TriedOperation = {
  /** The status on the wire, and the one Swagger UI shows. */
  status: number;
  shown: string;
  body: unknown;
  headers: Record<string, string>;
  request: Request;
};

/** Expands an operation, presses "Try it out" and fills its path parameters and body. */
export async function fillOperation(
  page: Page,
  tag: string,
  operationId: string,
  input: { params?: Record<string, string>; body?: string } = {},
): Promise<Locator> {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  if (!(await block.getAttribute('class'))?.split(' ').includes('is-open')) {
    await block.locator('.opblock-summary').click();
  }
  // The button renders a moment after the block opens; it reads "Cancel" once tried out. Counting
  // it before it renders skipped the click and left the inputs disabled under load.
  const toggle = block.locator('button.try-out__btn');
  await toggle.first().waitFor();
  if (((await toggle.first().textContent()) ?? '').includes('Try it out')) await toggle.first().click();
  await block.locator('button.execute').waitFor();
  // A response of an earlier run must not be read as this one's.
  const clear = block.locator('button.btn-clear');
  if ((await clear.count()) > 0) await clear.click();
  for (const [name, value] of Object.entries(input.params ?? {})) {
    await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
  }
  if (input.body !== undefined) await block.locator('textarea.body-param__text').fill(input.body);
  return block;
}

/**
 * Clicks an operation's "Try it out" as a person does: expand it, fill the path parameters and the
 * body, Execute, and wait for the answer on the wire and on the page.
 */
export async function tryOperation(
  page: Page,
  tag: string,
  operationId: string,
  input: { params?: Record<string, string>; body?: string } = {},
): Promise<TriedOperation> {
  const block = await fillOperation(page, tag, operationId, input);
  const path = (await block.locator('.opblock-summary-path').getAttribute('data-path')) ?? '';
  const answered = page.waitForResponse((response) => {
    const url = new URL(response.url());
    return (
      url.pathname.startsWith('/v1/') && !url.pathname.endsWith('/oauth/token') && matches(path, url.pathname)
    );
  });
  await block.locator('button.execute').click();
  const response = await answered;
  const status = block.locator('.live-responses-table .response .response-col_status');
  await status.first().waitFor();
  return {
    status: response.status(),
    shown: ((await status.first().textContent()) ?? '').trim(),
    body: await response.json(),
    headers: response.headers(),
    request: response.request(),
  };
}

/** `/customers/{id}` matches `/v1/customers/c...`. */
function matches(template: string, pathname: string): boolean {
  const pattern = new RegExp(`^/v1${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
  return pattern.test(pathname);
}
