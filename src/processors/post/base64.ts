import { mapPostprocessor } from '../shared/frame-map';

/** base64: encodes each frame as standard base64 (with padding). */
export const base64 = mapPostprocessor('base64', 'Encodes each frame as standard base64 (with padding).', (frame) =>
  Buffer.from(frame.toString('base64'), 'latin1'),
);
