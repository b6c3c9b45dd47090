// An OAUTHBEARER token for kafkajs, read as the native engine reads it (kbench-client's sasl.rs):
// from a file or a command's stdout, at each connection, through a 64 KiB bound (a token is a JWT
// of a few KB; /dev/zero or a runaway command is never read whole), and checked against RFC 6750's
// characters. Errors name the file or the command, never the token.
import { spawn } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { fileErrorText, type OauthBearerSasl } from '@kbench/schema';

/** The most a token file or a token command's output may hold; the native engine's bound too. */
export const MAX_TOKEN_BYTES = 64 * 1024;
/** A token command that has not finished in this long is killed. */
const TOKEN_COMMAND_TIMEOUT_MS = 30_000;
/** What of a failed command's stderr an error quotes. */
const STDERR_BYTES = 4096;

/** A token as RFC 6750 allows one (b64token), so it cannot break the SASL message's framing. */
function checkToken(token: string, from: string): string {
  if (token === '') throw new Error(`sasl: the OAUTHBEARER token from ${from} is empty`);
  if (!/^[A-Za-z0-9\-._~+/=]+$/.test(token)) {
    throw new Error(
      `sasl: the OAUTHBEARER token from ${from} holds characters a bearer token cannot (RFC 6750)`,
    );
  }
  return token;
}

function tooLong(from: string): Error {
  return new Error(`sasl: ${from} holds more than ${MAX_TOKEN_BYTES} bytes, which is no bearer token`);
}

function utf8(bytes: Buffer, from: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`sasl: ${from} holds no UTF-8 token`);
  }
}

/** At most MAX_TOKEN_BYTES of a file, refused past that; a FIFO or device is opened without blocking. */
function readTokenFile(file: string): string {
  const from = `tokenFile ${file}`;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new Error(`sasl: cannot read ${from}: ${fileErrorText(err)}`);
  }
  const buffer = Buffer.alloc(MAX_TOKEN_BYTES + 1);
  let length = 0;
  try {
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
  } catch (err) {
    throw new Error(`sasl: cannot read ${from}: ${fileErrorText(err)}`);
  } finally {
    closeSync(fd);
  }
  if (length > MAX_TOKEN_BYTES) throw tooLong(from);
  return checkToken(utf8(buffer.subarray(0, length), from).trim(), from);
}

/** What `sh -c command` prints, at most MAX_TOKEN_BYTES (the command is killed past that or on timeout). */
function runTokenCommand(command: string): Promise<string> {
  const from = `tokenCommand ${JSON.stringify(command)}`;
  return new Promise((resolve, reject) => {
    // Its own process group, so a kill reaches what the shell started too (and the pipe closes).
    const child = spawn('sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    let outBytes = 0;
    const err: Buffer[] = [];
    let errBytes = 0;
    let failure: Error | null = null;
    const fail = (error: Error) => {
      failure ??= error;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(
      () => fail(new Error(`sasl: ${from} did not finish within ${TOKEN_COMMAND_TIMEOUT_MS / 1000}s`)),
      TOKEN_COMMAND_TIMEOUT_MS,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      if (failure) return;
      outBytes += chunk.length;
      if (outBytes > MAX_TOKEN_BYTES) fail(tooLong(from));
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes >= STDERR_BYTES) return;
      const kept = chunk.subarray(0, STDERR_BYTES - errBytes);
      errBytes += kept.length;
      err.push(kept);
    });
    child.on('error', (error) => fail(new Error(`sasl: cannot start ${from}: ${error.message}`)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) return reject(failure);
      if (code !== 0) {
        const stderr = Buffer.concat(err).toString('utf8').trim().slice(0, 300);
        const status = code === null ? `signal ${signal}` : `exit status ${code}`;
        return reject(new Error(`sasl: ${from} failed (${status}): ${stderr}`));
      }
      try {
        resolve(checkToken(utf8(Buffer.concat(out), from).trim(), from));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** The token now, from the profile's tokenFile or tokenCommand. */
export async function readBearerToken(sasl: OauthBearerSasl): Promise<string> {
  if (sasl.tokenFile !== undefined) return readTokenFile(sasl.tokenFile);
  if (sasl.tokenCommand !== undefined) return runTokenCommand(sasl.tokenCommand);
  throw new Error('sasl: oauthbearer needs sasl.tokenFile or sasl.tokenCommand');
}
