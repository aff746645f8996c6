import FindMyWay, { type HTTPMethod } from 'find-my-way';

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Which methods a path accepts, for the 405 that names them in Allow. A router of its own holds every
 * route's pattern, so that a parametric path (`/rest/config/folders/:id`) is matched as Fastify matches
 * it, with the same router.
 */
export class AllowedMethods {
  readonly #router = FindMyWay();

  add(method: string | string[], url: string): void {
    for (const one of [method].flat()) {
      if (METHODS.includes(one as HTTPMethod)) this.#router.on(one as HTTPMethod, url, () => {});
    }
  }

  /** The methods `path` accepts, sorted; none for a path no route has. */
  of(path: string): string[] {
    return METHODS.filter((method) => this.#router.find(method, path) !== null).sort();
  }
}
