import { providerContract } from '../provider-contract.ts';
import { startMpesaHarness } from './harness.ts';

providerContract('M-Pesa (Daraja)', startMpesaHarness);
