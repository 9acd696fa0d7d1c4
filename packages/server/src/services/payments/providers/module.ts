import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { AppContext } from '../../../context.ts';
import type { CallbackPipeline } from '../callback-pipeline.ts';
import type { AdapterRegistry, PaymentAdapter } from '../pipeline/adapter.ts';

/** The networks the pipeline routes a number to (services/payments/mobile-network.ts). */
export type Network = Parameters<AdapterRegistry>[0];

/** What a provider's callback routes are given when app.ts registers them under /v1. */
export type CallbackRouteDeps<Settings> = { ctx: AppContext; settings: Settings; pipeline: CallbackPipeline };

/**
 * What every outside service we call has in common, whatever its kind (payments, prices, SMS): its
 * environment variables, all-or-none, and how they become its settings. `src/providers.ts` lists
 * every module; config.ts iterates that list.
 */
export type ProviderModule<Key extends string, Env extends z.ZodRawShape, Settings> = {
  /** The key of its settings on the Config (`config.mpesa`) and its name in logs and /healthz. */
  readonly key: Key;
  /** How configuration problems name it: "required with the other M-Pesa settings". */
  readonly label: string;
  /** Its environment variables, every one optional: config.ts spreads them into its schema. */
  readonly env: Env;
  /** Configured by all of these or by none of them (a partial set stops the start). */
  readonly required: readonly (keyof Env & string)[];
  /**
   * The settings from the parsed variables once the required set is complete or empty: undefined
   * when empty; an Error whose lines read `VARIABLE: problem` for anything else wrong.
   */
  settingsFrom(
    env: { [K in keyof Env]: z.output<Env[K]> } & { APP_ENV: 'sandbox' | 'production' },
    publicBaseUrl: string,
  ): Settings | undefined;
};

/**
 * One outside payment provider, as its folder's index.ts exports it: the common shape, a factory for
 * the adapter the pipeline drives, and its callback routes. app.ts, the adapter registry and
 * /healthz iterate the list in providers/index.ts; adding a provider is its folder and one line
 * there (README, "Outside providers: one module shape").
 */
export type PaymentProviderModule<Key extends string, Env extends z.ZodRawShape, Settings> = ProviderModule<
  Key,
  Env,
  Settings
> & {
  readonly network: Network;
  createAdapter(settings: Settings, options?: { fetch?: typeof fetch }): PaymentAdapter;
  /** Its callback routes (a Fastify plugin registered under /v1), if it calls back. */
  callbackRoutes?(app: FastifyInstance, deps: CallbackRouteDeps<Settings>): Promise<void>;
};

/** Checks a module against the shape while keeping its literal types. */
export const paymentProvider = <Key extends string, Env extends z.ZodRawShape, Settings>(
  module: PaymentProviderModule<Key, Env, Settings>,
) => module;
