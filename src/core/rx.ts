/**
 * The part of RxJS eddy uses, and the only place in src/ that names it.
 *
 * `require('rxjs')` loads the whole CommonJS index: 223 modules, about a
 * third of eddy's start-up (issue 13, goal 3). The same classes and
 * operators come from rxjs's `internal/*` entries (exported by its
 * package.json), which are the very modules the index re-exports, so an
 * application that imports `Observable` or `Subject` from 'rxjs' gets the
 * same classes and `instanceof` holds across both (test/core/rx.test.ts).
 * The types come from the index: `export type` is erased at compile time.
 *
 * Import RxJS in src/ from here, never from 'rxjs' itself:
 * test/core/rx.test.ts fails when the start path loads the rxjs index.
 * A name missing here: add it from the file the rxjs index takes it from
 * (node_modules/rxjs/dist/cjs/index.js).
 */
export type { Observer, OperatorFunction, SchedulerLike } from 'rxjs';

export { Observable } from 'rxjs/internal/Observable';
export { Subscriber } from 'rxjs/internal/Subscriber';
export { Subscription } from 'rxjs/internal/Subscription';
export { Subject } from 'rxjs/internal/Subject';
export { BehaviorSubject } from 'rxjs/internal/BehaviorSubject';
export { config } from 'rxjs/internal/config';
export { identity } from 'rxjs/internal/util/identity';
export { asyncScheduler } from 'rxjs/internal/scheduler/async';

export { EMPTY } from 'rxjs/internal/observable/empty';
export { NEVER } from 'rxjs/internal/observable/never';
export { interval } from 'rxjs/internal/observable/interval';

export { distinctUntilChanged } from 'rxjs/internal/operators/distinctUntilChanged';
export { finalize } from 'rxjs/internal/operators/finalize';
export { share } from 'rxjs/internal/operators/share';
export { take } from 'rxjs/internal/operators/take';

// merge, filter, map and switchMap, each its module's one export: `export *` because they also have
// overloads RxJS 8 drops (a scheduler, a thisArg, a resultSelector), which no-deprecated reports on any
// mention of the name; eddy calls none of them, and a call that did is reported where it is made
export * from 'rxjs/internal/observable/merge';
export * from 'rxjs/internal/operators/filter';
export * from 'rxjs/internal/operators/map';
export * from 'rxjs/internal/operators/switchMap';
