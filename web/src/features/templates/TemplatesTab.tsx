import { useRef, useState } from 'react';
import {
  LIMITS,
  MESSAGES,
  placeholdersIn,
  TemplatesErrorCode,
  WEB_MESSAGES,
  type Template,
  type TemplateCategory,
  type TemplateCategoryCount,
  type TemplateFieldErrors,
} from '@bns/contracts';
import {
  useCreateTemplateMutation,
  useDeleteTemplateMutation,
  useDuplicateTemplateMutation,
  useGetTemplateCategoriesQuery,
  useGetTemplatesQuery,
  useGetTemplateStatsQuery,
  useSetFavoriteMutation,
  useUpdateTemplateMutation,
} from '../../api/api.js';
import { errorCode, errorMessage, fieldErrors, httpStatus } from '../../api/errors.js';
import { useAppDispatch, useAppSelector } from '../../app/hooks.js';
import { Dialog } from '../../components/Dialog.js';
import { Spinner } from '../../components/Spinner.js';
import { selectUserId } from '../auth/slice.js';
import { selectJobInProgress } from '../job/slice.js';
import { newIdempotencyKey } from '../results/idempotency.js';
import { ConfirmSendDialog } from '../sender/StepReview.js';
import { toast } from '../toasts/toasts.js';
import { categoryFilterChanged, favoritesOnlyToggled, selectTemplateFilters } from './slice.js';
import { TemplateCard } from './TemplateCard.js';
import { TemplateFormDialog } from './TemplateFormDialog.js';
import { checkTemplate, loadTemplate, sendTemplate } from './thunks.js';
import { tabSelected } from '../ui/slice.js';
import { useDebouncedValue } from './useDebouncedValue.js';

const titleCase = (c: string) => c[0]!.toUpperCase() + c.slice(1);
/** A filter entry; `count` is shown when the server gives one. */
type CategoryOption = Pick<TemplateCategoryCount, 'category'> & { count?: number };
/** "Marketing (3)"; the count only when the server gave one. */
const categoryLabel = (c: CategoryOption) =>
  `${titleCase(c.category)}${typeof c.count === 'number' ? ` (${c.count})` : ''}`;
/** The server answered (so "Failed to …"), as opposed to the call not going through ("Error …"). */
const answered = (e: unknown) => httpStatus(e) !== undefined || (e as { status?: unknown })?.status === 'CUSTOM_ERROR';
/** "Failed to duplicate template", with the server's words when it refused because the user keeps too many. */
const duplicateFailure = (e: unknown) =>
  errorCode(e) === TemplatesErrorCode.LimitReached
    ? `${MESSAGES.failedToDuplicateTemplate}: ${errorMessage(e)}`
    : answered(e)
      ? MESSAGES.failedToDuplicateTemplate
      : MESSAGES.errorDuplicatingTemplate;

/** Tab 3 (Beta): stats, filters, the cards and their dialogs (SPEC §2 Tab 3, §4 Templates). */
export function TemplatesTab() {
  const dispatch = useAppDispatch();
  const userId = useAppSelector(selectUserId);
  const filters = useAppSelector(selectTemplateFilters);
  const running = useAppSelector(selectJobInProgress);
  // The list is fetched once the filters have been still for 300 ms.
  const debounced = useDebouncedValue(filters, LIMITS.templateFetchDebounceMs);
  const list = useGetTemplatesQuery({ userId, filters: debounced });
  const stats = useGetTemplateStatsQuery(userId);
  // SPEC §7: the filter offers the categories this user has, from GET /api/templates/{userId}/categories.
  const categories = useGetTemplateCategoriesQuery(userId);
  const [createTemplate, createState] = useCreateTemplateMutation();
  const [updateTemplate, updateState] = useUpdateTemplateMutation();
  const [setFavorite] = useSetFavoriteMutation();
  const [duplicateTemplate] = useDuplicateTemplateMutation();
  const [deleteTemplate, deleteState] = useDeleteTemplateMutation();

  const [editing, setEditing] = useState<Template | 'new' | null>(null);
  const [formErrors, setFormErrors] = useState<TemplateFieldErrors>({});
  const [deleting, setDeleting] = useState<Template | null>(null);
  const [sending, setSending] = useState<{ template: Template; numbers: string[] } | null>(null);

  const actions = {
    onFavorite: (t: Template) => {
      setFavorite({ userId, id: t.id, is_favorite: !t.is_favorite })
        .unwrap()
        .catch(() => toast.error(MESSAGES.failedToUpdateFavorite));
    },
    onDuplicate: (t: Template) => {
      duplicateTemplate({ userId, source: t })
        .unwrap()
        .then(
          () => toast.success(WEB_MESSAGES.templateDuplicated),
          (e: unknown) => toast.error(duplicateFailure(e)),
        );
    },
    onEdit: (t: Template) => {
      setFormErrors({});
      setEditing(t);
    },
    onDelete: (t: Template) => setDeleting(t),
    onUse: (t: Template) => {
      try {
        const numbers = dispatch(checkTemplate(t));
        if (numbers) setSending({ template: t, numbers });
      } catch {
        toast.error(MESSAGES.errorUsingTemplate);
      }
    },
  };

  // One Idempotency-Key per new template's content: saving the same form again after an error (a 503
  // whose write went through) answers the template already stored instead of making a second one.
  const createKeys = useRef(new Map<string, string>());
  const createKeyOf = (input: object) => {
    const content = JSON.stringify(input);
    const key = createKeys.current.get(content) ?? newIdempotencyKey();
    createKeys.current.set(content, key);
    return key;
  };

  const save = (input: Parameters<typeof createTemplate>[0]['input']) => {
    const isNew = editing === 'new';
    const call = isNew
      ? createTemplate({ userId, input, idempotencyKey: createKeyOf(input) })
      : updateTemplate({ userId, id: (editing as Template).id, patch: input });
    call.unwrap().then(
      () => {
        toast.success(WEB_MESSAGES.templateSaved);
        setEditing(null);
      },
      (e: unknown) => {
        setFormErrors(fieldErrors(e));
        toast.error(
          isNew
            ? `${MESSAGES.failedToSaveTemplate}: ${errorMessage(e)}`
            : `${MESSAGES.errorUpdatingTemplate}: ${errorMessage(e)}`,
        );
      },
    );
  };

  const confirmDelete = () => {
    if (!deleting) return;
    const t = deleting;
    deleteTemplate({ userId, id: t.id })
      .unwrap()
      .then(
        () => {
          toast.success(WEB_MESSAGES.templateDeleted);
          setDeleting(null);
        },
        (e: unknown) => {
          toast.error(answered(e) ? MESSAGES.failedToDeleteTemplate : MESSAGES.errorDeletingTemplate);
          setDeleting(null);
        },
      );
  };

  const statCards = [
    { label: 'Total Templates', value: stats.data?.total_templates },
    { label: 'Favorites', value: stats.data?.favorite_templates },
    { label: 'Categories', value: stats.data?.categories },
    { label: 'Total Usage', value: stats.data?.total_usage },
  ];
  const templates = list.data ?? [];
  // The categories the user has: a server that lists every category with 0 for the unused ones is filtered.
  const categoryOptions: CategoryOption[] = (categories.data ?? []).filter(
    (c: CategoryOption) => typeof c.count !== 'number' || c.count > 0,
  );
  // The chosen category stays selectable after its last template went (the list then says none match).
  if (filters.category !== 'all' && !categoryOptions.some((c) => c.category === filters.category))
    categoryOptions.push({ category: filters.category });

  return (
    <div className="templates">
      <div className="stats-grid">
        {statCards.map((s) => (
          <div key={s.label} className="stat-card">
            <span className="stat-value">{s.value ?? '–'}</span>
            <span className="stat-label">{s.label}</span>
          </div>
        ))}
      </div>

      <div className="toolbar">
        <label className="field inline">
          <span>Category</span>
          <select
            value={filters.category}
            onChange={(e) => dispatch(categoryFilterChanged(e.target.value as TemplateCategory | 'all'))}
          >
            <option value="all">{WEB_MESSAGES.allCategories}</option>
            {categoryOptions.map((c) => (
              <option key={c.category} value={c.category}>
                {categoryLabel(c)}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-check">
          <input
            type="checkbox"
            checked={filters.favoritesOnly}
            onChange={(e) => dispatch(favoritesOnlyToggled(e.target.checked))}
          />
          <span>Favorites Only</span>
        </label>
        <span className="toolbar-spacer" />
        <button
          type="button"
          className="button primary"
          onClick={() => {
            setFormErrors({});
            createKeys.current.clear();
            setEditing('new');
          }}
        >
          + New Template
        </button>
      </div>

      {list.isLoading ? (
        <Spinner label="Loading templates…" />
      ) : list.error ? (
        <div className="card error-card" role="alert">
          <p>{errorMessage(list.error)}</p>
          <button type="button" className="button primary" onClick={() => void list.refetch()}>
            {MESSAGES.tryAgain}
          </button>
        </div>
      ) : templates.length === 0 ? (
        <div className="card empty">
          <p>No templates{filters.category !== 'all' || filters.favoritesOnly ? ' match these filters' : ' yet'}.</p>
        </div>
      ) : (
        <>
          {running && (
            <p className="muted small" id="use-disabled-reason">
              {WEB_MESSAGES.useWhileSending}
            </p>
          )}
          <div className={`template-grid ${list.isFetching ? 'refreshing' : ''}`}>
            {templates.map((t) => (
              <TemplateCard
                key={t.id}
                template={t}
                actions={actions}
                useDisabled={running}
                useDisabledReason={running ? 'use-disabled-reason' : undefined}
              />
            ))}
          </div>
        </>
      )}

      {editing && (
        <TemplateFormDialog
          template={editing === 'new' ? null : editing}
          serverErrors={formErrors}
          busy={createState.isLoading || updateState.isLoading}
          onSubmit={save}
          onClose={() => setEditing(null)}
        />
      )}
      {deleting && (
        <Dialog
          title="Delete template"
          size="small"
          onClose={() => setDeleting(null)}
          footer={
            <>
              <button type="button" className="button secondary" onClick={() => setDeleting(null)}>
                Cancel
              </button>
              <button type="button" className="button danger" disabled={deleteState.isLoading} onClick={confirmDelete}>
                Delete
              </button>
            </>
          }
        >
          <p>
            Delete <strong>“{deleting.name}”</strong>? This cannot be undone.
          </p>
        </Dialog>
      )}
      {sending && (
        <ConfirmSendDialog
          title={`Send “${sending.template.name}”`}
          message={sending.template.message_content}
          numbers={sending.numbers}
          // A template's numbers carry no values: a message with {{variables}} cannot go from here.
          blockedReason={
            placeholdersIn(sending.template.message_content).length > 0
              ? WEB_MESSAGES.templateNeedsValues(placeholdersIn(sending.template.message_content))
              : undefined
          }
          extraAction={{
            label: WEB_MESSAGES.openInSender,
            onClick: () => {
              void dispatch(loadTemplate(sending.template, sending.numbers));
              dispatch(tabSelected('send'));
              setSending(null);
              toast.info(WEB_MESSAGES.templateLoaded);
            },
          }}
          // Nothing was loaded: the sender is as it was.
          onCancel={() => setSending(null)}
          onConfirm={() => {
            const { template, numbers } = sending;
            setSending(null);
            dispatch(sendTemplate(template, numbers)).catch(() => toast.error(MESSAGES.errorUsingTemplate));
          }}
        />
      )}
    </div>
  );
}
