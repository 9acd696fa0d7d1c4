import { providerContract } from '../provider-contract.ts';
import { startMtnHarness } from './harness.ts';

providerContract('MTN MoMo', startMtnHarness);
