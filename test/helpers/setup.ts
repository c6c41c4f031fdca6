/**
 * Loaded by mocha before every test file. Under CI the property-based tests
 * run with a fixed seed, so a run is reproducible and a landing never hinges
 * on a lucky draw; locally each run draws a fresh seed and keeps hunting.
 */
import fc from 'fast-check';

if (process.env.CI) fc.configureGlobal({ seed: 20261121 });
process.env.EDDY_LOG ??= 'silent';
