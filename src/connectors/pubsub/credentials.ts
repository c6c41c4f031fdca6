import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type * as GoogleAuthLibrary from 'google-auth-library';

/**
 * The credentials file of `pem`, read and checked by eddy, and the auth
 * client made from it explicitly.
 *
 * Google deprecates handing the auth library a credentials file to read by
 * itself (`keyFilename`): it then accepts any credential type, and some
 * types make it run a command, read a file or call a URL that the file
 * names (external_account: workload identity federation). A file from
 * somewhere the operator does not control could so run code on eddy's host.
 * eddy reads the file, builds the client of its type itself, and takes the
 * types that fetch their tokens from elsewhere only when the config says so
 * (`allow_external_credentials`).
 */

/** The credential types Google's auth library reads from a file, and whether each needs the opt-in. */
const CREDENTIAL_TYPES: Record<string, 'key' | 'external'> = {
  service_account: 'key',
  authorized_user: 'key',
  external_account: 'external',
  external_account_authorized_user: 'external',
  impersonated_service_account: 'external',
};

/** Pub/Sub's scope: what the tokens of a service account are asked for. */
const SCOPES = ['https://www.googleapis.com/auth/pubsub'];

/** A credentials file as far as eddy reads it: its type, the project it names, and its fields. */
export interface Credentials {
  readonly type: string;
  readonly project?: string;
  readonly json: Record<string, unknown>;
}

/**
 * Reads the credentials file of `pem` (a service-account key file, JSON, as
 * the Cloud console downloads it): a missing, unreadable or malformed file
 * fails the activation with a message that says what is wrong, rather than
 * the auth library's first failed request much later.
 */
export function readCredentials(path: string, allowExternal: boolean): Credentials {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`pem: cannot read the credentials file ${path}: ${(err as Error).message}`);
  }
  if (text.trimStart().startsWith('-----BEGIN')) {
    throw new Error(
      `pem: ${path} is a PEM file; a credentials file is the service account's JSON key file (with client_email and private_key), as the Cloud console downloads it`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // the parser's message would quote the file: not for an error that may travel back over the API
    throw new Error(`pem: ${path} is not a JSON credentials file`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || typeof (parsed as { type?: unknown }).type !== 'string') {
    throw new Error(`pem: ${path} is not a credentials file (a JSON object with a "type", such as "service_account")`);
  }
  const json = parsed as Record<string, unknown>;
  const type = json.type as string;
  const kind = Object.hasOwn(CREDENTIAL_TYPES, type) ? CREDENTIAL_TYPES[type] : undefined;
  if (kind === undefined) throw new Error(`pem: ${path} has credentials of an unknown type '${type}'`);
  if (kind === 'external' && !allowExternal) {
    throw new Error(
      `pem: ${path} holds ${type} credentials, which fetch their tokens from a command, file or URL the file names; ` +
        'set allow_external_credentials: true if the file comes from a source you control (docs/connectors/pubsub.md)',
    );
  }
  if (type === 'service_account') requireFields(json, path, 'the service-account file', ['client_email', 'private_key']);
  if (type === 'authorized_user') requireFields(json, path, 'the authorized-user file', ['client_id', 'client_secret', 'refresh_token']);
  const project = typeof json.project_id === 'string' && json.project_id !== '' ? json.project_id : undefined;
  return { type, project, json };
}

function requireFields(json: Record<string, unknown>, path: string, what: string, keys: string[]): void {
  for (const key of keys) if (typeof json[key] !== 'string' || json[key] === '') throw new Error(`pem: ${what} ${path} has no ${key}`);
}

type AuthClient = GoogleAuthLibrary.AuthClient;

/**
 * The auth client of checked credentials, built from Pub/Sub's own copy of
 * the auth library (so that the client it is handed is one it knows).
 */
export function authClientOf(creds: Credentials, path: string): AuthClient {
  const auth = authLibrary();
  const json = creds.json;
  switch (creds.type) {
    case 'service_account':
      return keyClient(auth, json);
    case 'authorized_user':
      return userClient(auth, json);
    case 'external_account': {
      const client = auth.ExternalAccountClient.fromJSON(json as unknown as GoogleAuthLibrary.ExternalAccountClientOptions);
      if (!client) throw new Error(`pem: ${path}: the external_account credentials are not ones the auth library knows`);
      return client;
    }
    case 'external_account_authorized_user':
      return new auth.ExternalAccountAuthorizedUserClient(json as unknown as GoogleAuthLibrary.ExternalAccountAuthorizedUserClientOptions);
    default:
      return impersonated(auth, json, path);
  }
}

function keyClient(auth: typeof GoogleAuthLibrary, json: Record<string, unknown>): AuthClient {
  return new auth.JWT({
    email: json.client_email as string,
    key: json.private_key as string,
    keyId: typeof json.private_key_id === 'string' ? json.private_key_id : undefined,
    scopes: SCOPES,
  });
}

function userClient(auth: typeof GoogleAuthLibrary, json: Record<string, unknown>): AuthClient {
  return new auth.UserRefreshClient({
    clientId: json.client_id as string,
    clientSecret: json.client_secret as string,
    refreshToken: json.refresh_token as string,
  });
}

/** impersonated_service_account: a source credential (a key or a user) asking for the target account's tokens. */
function impersonated(auth: typeof GoogleAuthLibrary, json: Record<string, unknown>, path: string): AuthClient {
  const source = json.source_credentials as Record<string, unknown> | undefined;
  const url = typeof json.service_account_impersonation_url === 'string' ? json.service_account_impersonation_url : '';
  const target = /serviceAccounts\/([^/:]+):generateAccessToken$/.exec(url)?.[1];
  if (source === undefined || typeof source !== 'object' || target === undefined) {
    throw new Error(`pem: ${path}: impersonated_service_account credentials need source_credentials and a service_account_impersonation_url`);
  }
  const sourceClient = source.type === 'service_account' ? keyClient(auth, source) : source.type === 'authorized_user' ? userClient(auth, source) : undefined;
  if (!sourceClient) throw new Error(`pem: ${path}: the source_credentials of an impersonated account must be a service_account or an authorized_user`);
  const delegates = Array.isArray(json.delegates) ? (json.delegates as string[]) : [];
  return new auth.Impersonated({ sourceClient, targetPrincipal: decodeURIComponent(target), delegates, targetScopes: SCOPES });
}

/** The auth library Pub/Sub's client itself loads (its dependency, not eddy's). */
function authLibrary(): typeof GoogleAuthLibrary {
  const from = dirname(require.resolve('@google-cloud/pubsub'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- resolved from Pub/Sub's own folder, which an import cannot say
  return require(require.resolve('google-auth-library', { paths: [from] })) as typeof GoogleAuthLibrary;
}
