// What the web shell's module loader hands the client at run time (shell.cjs
// requires them lazily). The host installs no declarations for them, so this
// declares the part the client uses: React's own API as React documents it,
// and the host's primitives by the props the client passes them (the rest of
// their props is the host's, unpublished).

declare module 'react' {
  /** What createElement makes: the client only hands it back to React. */
  export interface ReactElement {
    readonly type: unknown;
    readonly props: unknown;
    readonly key: string | null;
  }
  export type ReactNode = ReactElement | string | number | boolean | null | undefined | Iterable<ReactNode>;

  /** One of the client's own function components. */
  export type FunctionComponent<P> = (props: P) => ReactNode;
  export {}; // what follows without `export` stays private to these declarations
  const propsOf: unique symbol;
  /** A component React or the host defines (Fragment, the primitives): opaque, known by the props it takes. */
  export interface HostComponent<P> {
    readonly [propsOf]: P;
  }

  /** The parts of React's synthetic events the client's handlers read. */
  export interface SyntheticEvent<T extends EventTarget = HTMLElement> {
    readonly currentTarget: T;
    readonly target: EventTarget;
    preventDefault(): void;
  }
  export interface MouseEvent<T extends EventTarget = HTMLElement> extends SyntheticEvent<T> {
    /** 0 for a click made with the keyboard (Enter or Space on a button). */
    readonly detail: number;
  }
  export interface KeyboardEvent<T extends EventTarget = HTMLElement> extends SyntheticEvent<T> {
    readonly key: string;
    readonly shiftKey: boolean;
  }
  export interface ChangeEvent<T extends EventTarget = HTMLInputElement> extends SyntheticEvent<T> {
    readonly target: T;
  }

  export interface RefObject<T> {
    current: T;
  }

  /** An intrinsic element's props: attributes pass through as given. */
  export interface DOMProps {
    [attribute: string]: unknown;
    key?: string | number;
    ref?: RefObject<Element | null>;
    style?: Record<string, string | number>;
    onClick?: (e: MouseEvent) => void;
    onKeyDown?: (e: KeyboardEvent) => void;
  }

  export function createElement<P>(type: FunctionComponent<P> | HostComponent<P>, props?: P | null, ...children: ReactNode[]): ReactElement;
  export function createElement(type: string, props?: DOMProps | null, ...children: ReactNode[]): ReactElement;
  export const Fragment: HostComponent<{}>;

  export type SetStateAction<S> = S | ((prev: S) => S);
  export function useState<S>(initial: S | (() => S)): [S, (next: SetStateAction<S>) => void];
  export function useEffect(effect: () => void | (() => void), deps?: readonly unknown[]): void;
  export function useRef<T>(initial: T): RefObject<T>;
  export function useCallback<F extends (...args: never[]) => unknown>(callback: F, deps: readonly unknown[]): F;
  export function useSyncExternalStore<S>(subscribe: (onStoreChange: () => void) => () => void, getSnapshot: () => S, getServerSnapshot?: () => S): S;
}

declare module '@deepseek-ai/dsh-client-ui-primitives' {
  import type { ChangeEvent, DOMProps, HostComponent, ReactNode } from 'react';

  /** One entry of a Menu's list or footer: a choice, or (with `type`) a label or a separator. */
  export interface MenuItem {
    id: string;
    type?: 'label' | 'separator';
    label?: ReactNode;
    text?: string;
  }
  export interface MenuProps {
    open: boolean;
    anchor: ReactNode;
    items: MenuItem[];
    footer?: MenuItem[];
    selectedId?: string;
    onSelect: (id: string) => void;
    onClose: () => void;
    portal?: boolean;
    side?: 'top' | 'bottom';
    align?: 'start' | 'end';
  }
  export interface ButtonProps extends DOMProps {
    variant?: 'primary' | 'outline' | 'ghost';
    size?: 'sm';
    icon?: ReactNode;
    disabled?: boolean;
  }
  export interface InputProps extends Omit<DOMProps, 'onChange'> {
    value: string;
    onChange: (e: ChangeEvent<HTMLInputElement>) => void;
  }
  export interface ModalProps {
    open: boolean;
    onClose: () => void;
    title: string;
    closeLabel?: string;
    className?: string;
  }
  export interface PillProps extends DOMProps {
    active?: boolean;
  }

  export const Menu: HostComponent<MenuProps>;
  export const Button: HostComponent<ButtonProps>;
  export const Input: HostComponent<InputProps>;
  export const Modal: HostComponent<ModalProps>;
  export const Pill: HostComponent<PillProps>;
  export const IconChevronDownOutline14: HostComponent<DOMProps>;
  export const IconChevronUpOutline14: HostComponent<DOMProps>;
  export const IconTrashOutline16: HostComponent<DOMProps>;
}
