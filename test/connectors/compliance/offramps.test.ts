import { describeLifecycle } from './lifecycle';

describeLifecycle('offramp');
