import type { ClientOptions } from '../terminal/client';
import { runTop } from '../terminal/top';
import { defineCommand } from './command';
import { API_URL_FLAG, apiUrl, TOKEN_FLAG } from './remote';

export const topCommand = defineCommand({
  name: 'top',
  summary: "watch a running eddy's ports: events and errors per second",
  description:
    'Full screen, redrawn every second from GET /status: per instance and port the events/s and errors/s, the total, the breaker and ' +
    'the state (docs/console.md). q or Ctrl-C quits. While the API cannot be reached it says so and keeps trying.',
  flags: {
    api: API_URL_FLAG,
    token: TOKEN_FLAG,
  },
  options: ({ values }): ClientOptions => ({ api: apiUrl(values.api), token: values.token }),
  run: (options) => runTop(options),
});
