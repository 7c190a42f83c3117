// Typed client of the ImageTask actor over any ActorInvoker (embedded or Dapr).

import type { ActorInvoker } from '../runtime/port';
import { IMAGE_TASK_ACTOR_TYPE, type ImageTaskApi } from './ImageTaskInterface';

export class ImageTaskClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(taskId: string): ImageTaskApi {
    const call = <M extends keyof ImageTaskApi>(method: M) => (arg: Parameters<ImageTaskApi[M]>[0]) =>
      this.actors.invoke<Awaited<ReturnType<ImageTaskApi[M]>>>(IMAGE_TASK_ACTOR_TYPE, taskId, method, arg ?? {});
    return {
      start: call('start'),
      record: call('record'),
      finish: call('finish'),
      expire: call('expire'),
      releaseLate: call('releaseLate'),
      view: call('view'),
    } as ImageTaskApi;
  }
}
