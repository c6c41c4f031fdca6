import { showStatus, type StatusOptions } from '../terminal/status';
import { defineCommand } from './command';
import { API_URL_FLAG, apiUrl, TOKEN_FLAG } from './remote';

export const statusCommand = defineCommand({
  name: 'status',
  summary: "print a running eddy's artefacts and instances",
  description:
    "Asks the API's GET /status and prints the artefacts per kind, and each instance with its state, its circuit breaker and per port " +
    'the events and errors so far (docs/console.md). Exit 1 when the API cannot be reached or refuses, 2 for bad usage.',
  flags: {
    api: API_URL_FLAG,
    token: TOKEN_FLAG,
    json: { type: 'boolean', description: "print the API's status document (GET /status) instead of tables" },
  },
  options: ({ values }): StatusOptions => ({ api: apiUrl(values.api), token: values.token, json: values.json }),
  run: (options, io) => showStatus(options, io.out, io.err),
});
