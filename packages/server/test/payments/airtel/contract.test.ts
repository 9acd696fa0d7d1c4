import { providerContract } from '../provider-contract.ts';
import { startAirtelHarness } from './harness.ts';

providerContract('Airtel Money', startAirtelHarness);
