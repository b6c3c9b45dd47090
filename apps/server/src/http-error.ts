// An error that carries its HTTP status, so handlers throw and the error handler answers.
import type { ScenarioIssue } from '@kbench/schema';

export class HttpError extends Error {
  readonly statusCode: number;
  readonly issues: ScenarioIssue[] | undefined;
  constructor(statusCode: number, message: string, issues?: ScenarioIssue[]) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.issues = issues;
  }
}

export function invalidScenario(issues: ScenarioIssue[]): HttpError {
  return new HttpError(400, 'invalid scenario', issues);
}
