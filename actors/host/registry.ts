// Every actor class both hosts run. Adding an actor means adding it here.

import { FundsHold } from '../funds-hold/FundsHold';
import { ImageTask } from '../image-task/ImageTask';
import { Order } from '../order/Order';
import { Session } from '../session/Session';
import { Account } from '../account/Account';
import { Journal } from '../journal/Journal';
import { WorkspaceIndex } from '../workspace-index/WorkspaceIndex';
import type { ActorClass } from '../runtime/port';

export const ACTOR_CLASSES: readonly ActorClass[] = [FundsHold, ImageTask, Order, Session, WorkspaceIndex, Account, Journal];
