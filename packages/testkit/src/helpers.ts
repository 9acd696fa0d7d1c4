import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Redis } from 'ioredis';
import type { TestApp } from './app.ts';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CLI = path.join(ROOT, 'packages/cli/src/partner-api.ts');

export const INTERNAL_ERROR_BODY = '{"error":"Internal Server Error"}';
/** The body of every unknown route (Fastify's 404, and what a path behind a switch that is off answers). */
export const NOT_FOUND_BODY = '{"error":"Not Found"}';
/** The spec's 404 for a customer that does not exist or is another organization's. */
export const CUSTOMER_NOT_FOUND_BODY = { error: 'Not found', message: 'Customer not found' };
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const JSON_HEADERS = { 'content-type': 'application/json' };

const usedIps = new Set<string>();

/**
 * A client address no other test in this process has used, from 198.18.0.0/15 (RFC 2544, 131k
 * addresses): budgets of different tests never meet, even in a Redis shared with other processes.
 */
export function uniqueClientIp(): string {
  for (;;) {
    const n = 1 + Math.floor(Math.random() * 131_070);
    const ip = `198.${18 + (n >> 16)}.${(n >> 8) & 0xff}.${n & 0xff}`;
    if (!usedIps.has(ip)) {
      usedIps.add(ip);
      return ip;
    }
  }
}

/**
 * Waits for the app's Redis client to connect. Until then the limiters count in memory (the
 * documented fallback), which would make a "shared budget" test pass or fail by timing alone.
 */
export async function redisReady(redis: Redis | undefined, timeoutMs = 5000): Promise<void> {
  if (!redis) throw new Error('this app has no Redis client');
  const deadline = Date.now() + timeoutMs;
  while (redis.status !== 'ready') {
    if (Date.now() > deadline) throw new Error(`Redis not ready after ${timeoutMs} ms (${redis.status})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Admin API through inject, with the app's admin token unless told otherwise. */
export function adminInject(
  t: TestApp,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
  token: string | null = t.ctx.secrets.adminToken,
): Promise<LightMyRequestResponse> {
  return t.admin.inject({
    method,
    url,
    payload: payload as InjectOptions['payload'],
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
}

/** The admin token a process generated in its DATA_DIR (embedded store, no ADMIN_TOKEN given). */
export function adminTokenOf(dataDir: string): string {
  return (JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { adminToken: string })
    .adminToken;
}

/** fetch against a process's admin listener. */
export async function adminFetch(
  adminUrl: string,
  token: string,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${adminUrl}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export type CliResult = { code: number | null; stdout: string; stderr: string };

/** Runs the operator CLI the way an operator does: its own process, configured by the environment. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
