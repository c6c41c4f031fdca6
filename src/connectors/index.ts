import type { OfframpType, OnrampType } from './connector';
import { blaster } from './blaster/onramp';
import { cbOnramp } from './cb/onramp';
import { fileOnramp } from './file/onramp';
import { metronome } from './metronome/onramp';
import { stdin } from './stdin/onramp';
import { restOnramp } from './rest/onramp';
import { restOfframp } from './rest/offramp';
import { blackhole } from './blackhole/offramp';
import { cbOfframp } from './cb/offramp';
import { debug } from './debug/offramp';
import { exit } from './exit/offramp';
import { fileOfframp } from './file/offramp';
import { stderr, stdout } from './std/offramp';

/** The builtin connectors. Adding one is one file plus one line here. */
/* eslint-disable @typescript-eslint/no-explicit-any */
export const builtinOnramps: readonly OnrampType<any>[] = [blaster, cbOnramp, fileOnramp, metronome, stdin, restOnramp];
export const builtinOfframps: readonly OfframpType<any>[] = [blackhole, cbOfframp, debug, exit, fileOfframp, stderr, stdout, restOfframp];
