import type { ClientConfig } from '@google-cloud/pubsub';
import { s } from '../../schema/typed';
import type { ObjectStatic } from '../../schema/typed';
import { readCredentials, type Credentials } from './credentials';

/**
 * What the pubsub onramp needs before it talks to Pub/Sub: the
 * subscription's full name, the project, and the client options for the
 * credentials. Kept apart from the onramp so that the checks that can be
 * made without a server (names, the credentials file) are plain functions.
 */

/** A subscription id: 3 to 255 characters, a letter first (the service's own rule). */
const SUBSCRIPTION_ID = /^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/;
/** A project id (6 to 30 characters) or a legacy domain-scoped one (`example.com:project`). */
const PROJECT_ID = /^(?:[a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const FULL_NAME = /^projects\/([^/]+)\/subscriptions\/([^/]+)$/;

export interface SubscriptionName {
  /** the id part (`my-sub`) */
  readonly id: string;
  /** the project named in a full name, if the config gave one */
  readonly project?: string;
}

/** Parses `subscription` (an id, or `projects/P/subscriptions/S`); throws naming the field. */
export function parseSubscription(value: string): SubscriptionName {
  const full = FULL_NAME.exec(value);
  const id = full ? full[2] : value;
  if (!SUBSCRIPTION_ID.test(id)) {
    throw new Error(
      `subscription: '${value}' is not a subscription id (3 to 255 letters, digits or - _ . ~ + %, a letter first) nor projects/<project>/subscriptions/<id>`,
    );
  }
  if (full && !PROJECT_ID.test(full[1])) throw new Error(`subscription: '${full[1]}' is not a project id`);
  return full ? { id, project: full[1] } : { id };
}

/** The keys of the onramp's config that say what to pull from and as whom: what this module reads. */
export const subscriptionProperties = {
  subscription: s.string({
    minLength: 1,
    description:
      "the subscription to pull from: its id (the project is then project_id, or the credentials file's) or its full name projects/<project>/subscriptions/<id>",
  }),
  pem: s.string({
    path: 'read',
    minLength: 1,
    description:
      "path of the credentials file (the service account's JSON key file); absent: Application Default Credentials (the file GOOGLE_APPLICATION_CREDENTIALS names, or the metadata server on Google Cloud)",
  }),
  allow_external_credentials: s.boolean({
    default: false,
    description:
      'take a credentials file of a type that fetches its tokens from a command, file or URL it names (external_account, external_account_authorized_user, impersonated_service_account): only for a file from a source you control',
  }),
  project_id: s.string({
    minLength: 1,
    description:
      'the project of the subscription; absent: the one of a full subscription name, else of the credentials file, else the one Application Default Credentials find',
  }),
};

/** Those keys of a config that passed the onramp's schema (it requires subscription). */
type NamesConfig = ObjectStatic<typeof subscriptionProperties, 'subscription' | 'allow_external_credentials'>;

/** Checks `subscription` and `project_id` and that they agree (publish time); throws naming the field. */
export function checkNames(config: NamesConfig): SubscriptionName {
  const sub = parseSubscription(config.subscription);
  if (config.project_id !== undefined && !PROJECT_ID.test(config.project_id)) {
    throw new Error(`project_id: '${config.project_id}' is not a project id (6 to 30 lowercase letters, digits or hyphens, a letter first)`);
  }
  if (sub.project !== undefined && config.project_id !== undefined && sub.project !== config.project_id) {
    throw new Error(`subscription names project '${sub.project}' but project_id is '${config.project_id}'`);
  }
  return sub;
}

export interface ClientPlan {
  /** the client options, but the auth client (credentials.ts `authClientOf`, once the library is loaded) */
  readonly options: ClientConfig;
  /** the checked credentials file of `pem` */
  readonly credentials?: Credentials;
  /** the subscription as the client is given it: the full name when the project is known */
  readonly name: string;
  /** the project, when known without asking the auth library */
  readonly project?: string;
}

/**
 * The client options and subscription name for a config. The project is,
 * in order: the one of a full subscription name, `project_id`, the
 * credentials file's. Without any of them the auth library finds it
 * (GOOGLE_CLOUD_PROJECT, the file of GOOGLE_APPLICATION_CREDENTIALS, gcloud's
 * configuration, or the metadata server of a Google Cloud host).
 */
export function clientPlan(config: NamesConfig): ClientPlan {
  const sub = checkNames(config);
  const credentials = config.pem === undefined ? undefined : readCredentials(config.pem, config.allow_external_credentials);
  const project = sub.project ?? config.project_id ?? credentials?.project;
  const options: ClientConfig = {};
  if (project !== undefined) options.projectId = project;
  return { options, credentials, name: project === undefined ? sub.id : `projects/${project}/subscriptions/${sub.id}`, project };
}

/** An error's message with its gRPC status name when it has one (NOT_FOUND, PERMISSION_DENIED). */
export function describe(err: unknown): string {
  if (err instanceof Error) return err.message !== '' ? err.message : err.name;
  return String(err);
}
