import { describeLifecycle } from './lifecycle';

describeLifecycle('onramp');
