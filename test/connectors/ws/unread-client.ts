/**
 * A WebSocket client that sends requests and does not read its socket, run
 * as a child process by backpressure.test.ts so that what it buffers is not
 * counted in the memory of the eddy under test. It talks JSON lines: commands
 * on stdin, reports on stdout.
 *
 *   {"cmd":"write","bytes":B,"cap":N}           send B-byte messages as a polite writer would (only while its own
 *                                               unsent bytes are under 64 KiB), until N were sent or "stop"
 *   {"cmd":"stop"}                               ends "write": reports "stopped"
 *   {"cmd":"fill","bytes":B,"until":U,"cap":N}  send B-byte messages until its own unsent bytes reach U (or N were sent)
 *   {"cmd":"send","count":K,"bytes":B}          send K more
 *   {"cmd":"read"}                               read again: reports "read" once a reply came for every message sent
 *
 * Reports: open, stopped/filled/sent {sent, buffered}, read {received}, close {code, reason, received}.
 */
import { WebSocket } from 'ws';

const socket = new WebSocket(process.argv[2]);
let sent = 0;
let received = 0;
let reading = false;

const report = (event: string, fields: Record<string, unknown> = {}) => process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A JSON request of exactly `bytes` bytes. */
function request(bytes: number): string {
  const head = `{"n":${sent},"pad":"`;
  return `${head}${'x'.repeat(Math.max(0, bytes - head.length - 2))}"}`;
}

let writing = false;

async function write(bytes: number, cap: number): Promise<void> {
  writing = true;
  while (writing && sent < cap) {
    for (let i = 0; i < 32 && sent < cap && socket.bufferedAmount < 64 * 1024; i++, sent++) socket.send(request(bytes));
    await tick();
  }
  report('stopped', { sent, buffered: socket.bufferedAmount });
}

async function fill(bytes: number, until: number, cap: number): Promise<void> {
  while (socket.bufferedAmount < until && sent < cap) {
    for (let i = 0; i < 32 && sent < cap; i++, sent++) socket.send(request(bytes));
    await tick(); // lets the socket write what the kernel takes
  }
  report('filled', { sent, buffered: socket.bufferedAmount });
}

async function send(count: number, bytes: number): Promise<void> {
  for (let i = 0; i < count; i++, sent++) socket.send(request(bytes));
  await tick();
  report('sent', { sent, buffered: socket.bufferedAmount });
}

socket.on('open', () => {
  socket.pause(); // reads nothing: the replies pile up in the kernel, then in eddy
  report('open');
});
socket.on('message', () => {
  received++;
  if (reading && received === sent) report('read', { received });
});
socket.on('close', (code, reason) => report('close', { code, reason: reason.toString(), received }));
socket.on('error', (err) => report('error', { message: err.message }));

let input = '';
process.stdin.on('data', (chunk: Buffer) => {
  input += chunk.toString('utf8');
  let newline: number;
  while ((newline = input.indexOf('\n')) >= 0) {
    const command = JSON.parse(input.slice(0, newline)) as { cmd: string; bytes: number; until: number; cap: number; count: number };
    input = input.slice(newline + 1);
    if (command.cmd === 'write') void write(command.bytes, command.cap);
    else if (command.cmd === 'stop') writing = false;
    else if (command.cmd === 'fill') void fill(command.bytes, command.until, command.cap);
    else if (command.cmd === 'send') void send(command.count, command.bytes);
    else if (command.cmd === 'read') {
      reading = true;
      socket.resume();
      if (received === sent) report('read', { received });
    }
  }
});
process.stdin.on('end', () => socket.terminate());
