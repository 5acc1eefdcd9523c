/**
 * Worker-thread entry of the configuration reader (`configuration-reader.ts`): reads one large
 * upload off the event loop (docs/adr/0017-configuration-off-the-event-loop.md).
 */
import { readConfigurationUpload, type UploadJob, type UploadReading } from './configuration-upload.js';

export default function runUploadJob(job: UploadJob): UploadReading {
  return readConfigurationUpload(job);
}
