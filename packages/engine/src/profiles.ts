// Named target profiles: one JSON file per profile in $KBENCH_HOME/profiles, readable by the user
// only (files 0600, the folder 0700), because they hold passwords and keys. Nothing else in kbench
// writes a profile's secrets anywhere: runs store the profile's name and its security protocol.
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { kbenchHome } from '@kbench/history';
import {
  fileErrorText,
  PROFILE_NAME_PATTERN,
  ProfileError,
  parseProfile,
  type TargetProfile,
} from '@kbench/schema';

/** `$KBENCH_HOME/profiles`. */
export function defaultProfilesDir(): string {
  return path.join(kbenchHome(), 'profiles');
}

export class ProfileExistsError extends Error {
  override name = 'ProfileExistsError';
}

export class ProfileStore {
  constructor(readonly dir: string = defaultProfilesDir()) {}

  private file(name: string): string {
    if (!PROFILE_NAME_PATTERN.test(name)) {
      throw new ProfileError([{ path: 'name', message: `not a profile name: ${JSON.stringify(name)}` }]);
    }
    return path.join(this.dir, `${name}.json`);
  }

  /** Every stored profile, by name. A file that is not a valid profile throws, naming the file. */
  list(): TargetProfile[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((f) => f.endsWith('.json'));
    } catch {
      return [];
    }
    return names.map((f) => this.read(path.join(this.dir, f))).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The names of the stored profiles (from their file names, so a broken file does not hide the rest). */
  names(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => f.slice(0, -'.json'.length))
        .filter((n) => PROFILE_NAME_PATTERN.test(n))
        .sort();
    } catch {
      return [];
    }
  }

  /** The profile called `name`, or undefined. */
  get(name: string): TargetProfile | undefined {
    if (!PROFILE_NAME_PATTERN.test(name)) return undefined;
    const file = this.file(name);
    try {
      statSync(file);
    } catch {
      return undefined;
    }
    return this.read(file);
  }

  private read(file: string): TargetProfile {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      // Not the parser's message: it quotes the text around the mistake, which may be a password.
      const reason = (err as NodeJS.ErrnoException).code ? fileErrorText(err) : 'not valid JSON';
      throw new ProfileError([{ path: '', message: `${file}: cannot read the profile (${reason})` }]);
    }
    try {
      return parseProfile(raw);
    } catch (err) {
      if (err instanceof ProfileError) throw new ProfileError(err.issues, file);
      throw err;
    }
  }

  /** Validates and writes a profile (mode 0600, in a 0700 folder); refuses to replace one unless asked. */
  save(input: unknown, options: { replace?: boolean } = {}): TargetProfile {
    const profile = parseProfile(input);
    const file = this.file(profile.name);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    if (!options.replace && this.get(profile.name)) {
      throw new ProfileExistsError(`a profile named ${JSON.stringify(profile.name)} exists already`);
    }
    // Written whole under a temporary name, then renamed: never a half-written profile.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, file);
    return profile;
  }

  /** Deletes a profile; false if there was none. */
  remove(name: string): boolean {
    const file = this.file(name);
    try {
      statSync(file);
    } catch {
      return false;
    }
    rmSync(file);
    return true;
  }
}
