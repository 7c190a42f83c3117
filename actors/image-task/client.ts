// Typed client of the ImageTask actor over any ActorInvoker (embedded or Dapr).

import { actorProxy } from '../runtime/proxy';
import type { ActorInvoker } from '../runtime/port';
import { IMAGE_TASK_ACTOR_TYPE, IMAGE_TASK_METHODS, type ImageTaskApi } from './ImageTaskInterface';

export class ImageTaskClient {
  constructor(private readonly actors: ActorInvoker) {}

  of(taskId: string): ImageTaskApi {
    return actorProxy<ImageTaskApi>(this.actors, IMAGE_TASK_ACTOR_TYPE, taskId, IMAGE_TASK_METHODS);
  }
}
