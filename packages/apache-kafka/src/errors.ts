/** A program this package needs (java, mvn) is not installed or not on PATH. */
export class MissingProgramError extends Error {
  constructor(
    readonly program: string,
    why: string,
    install: string,
  ) {
    super(`${program} was not found on PATH: ${why}. Install it (${install}) and run again.`);
    this.name = 'MissingProgramError';
  }
}

/** A Kafka tool exited with an error, or its output did not say what we expected. */
export class KafkaToolError extends Error {
  constructor(
    message: string,
    readonly stdout: string,
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(message);
    this.name = 'KafkaToolError';
  }
}

/** The last `lines` lines of a tool's output, for error messages. */
export function tail(text: string, lines = 15): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
