import { useTestHashCost } from '../../src/modules/auth/secret-hash.js';

// Every test file hashes credentials and passwords at a low scrypt cost: at the real cost
// (about 60 ms a hash) the suite spends minutes in scrypt. The tests that time a check turn the
// real cost back on; services the end-to-end tests start always use it.
useTestHashCost(true);
