import type { SyncModel } from '../../service/model.ts';
import { HttpError } from '../http-errors.ts';

/** The model of the service this worker holds; 503 with Retry-After for the moment it changes hands. */
export function heldModel(options: { model: () => SyncModel | undefined }): SyncModel {
  const model = options.model();
  if (!model) {
    throw new HttpError(
      'SYNCD_ERR_SERVICE_UNAVAILABLE',
      'the index is changing hands between workers (a restart); try again in a moment',
      { 'retry-after': '1' },
    );
  }
  return model;
}
