/**
 * Record factories shared by the self-service tests (not a test file itself). Every record gets a
 * unique name, and the tests narrow lists to their own records (the files of one jest worker share
 * a database).
 */
import { Brand, User } from '../../src/db/models';
import { type TestApi, newEmail, unique } from '../helpers/app';
import { expectSuccess } from '../helpers/envelope';

export const TYPE_KEYS = [
  'id', 'brand_id', 'name', 'slug', 'description', 'order', 'enabled', 'protected', 'internal', 'content', 'view', 'icon',
  'article_ordering', 'show_on_dashboard', 'external_link', 'created_at', 'updated_at', 'brand',
];
export const TYPE_SUMMARY_KEYS = ['id', 'name', 'slug', 'description', 'view', 'icon', 'show_on_dashboard', 'created_at', 'updated_at'];
export const CATEGORY_KEYS = ['id', 'type_id', 'parent', 'name', 'slug', 'public', 'parent_public', 'created_at', 'updated_at'];
export const TAG_KEYS = ['id', 'name', 'slug', 'created_at', 'updated_at'];
export const ARTICLE_KEYS = [
  'id', 'author_id', 'title', 'slug', 'excerpt', 'text', 'published', 'published_at', 'protected', 'pinned', 'created_at', 'updated_at',
  'frontend_url', 'categories', 'types', 'tags', 'attachments',
];

export const ids = (data: Array<{ id: number }>) => data.map((d) => d.id);

/** `Hello World` → `hello-world` (what the API generates for plain ASCII names). */
export const slugOf = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

export function factories(api: TestApi) {
  const f = {
    async brand(): Promise<Brand> {
      return Brand.create({ name: unique('Brand'), system_url: `https://${unique('b').toLowerCase()}.example.com/` });
    },
    async type(body: Record<string, unknown> = {}): Promise<any> {
      const brandId = body.brand_id ?? (await Brand.findOne({ order: [['id', 'ASC']] }))!.id;
      return expectSuccess(await api.post('/api/selfservice/type', {
        brand_id: brandId, name: unique('Type'), content: 0, view: 0, description: 'A type', ...body,
      }), 'Successfully created new type!');
    },
    async category(typeId: number, body: Record<string, unknown> = {}): Promise<any> {
      return expectSuccess(await api.post('/api/selfservice/category', { type_id: typeId, name: unique('Category'), ...body }), 'Successfully created new category!');
    },
    async tag(body: Record<string, unknown> = {}): Promise<any> {
      return expectSuccess(await api.post('/api/selfservice/tag', { name: unique('Tag'), ...body }), 'Successfully created new tag!');
    },
    async operator(values: Partial<User> = {}): Promise<User> {
      return User.create({ type: 'operator', email: newEmail('op'), firstname: 'Ada', lastname: 'Lovelace', ...values });
    },
    async user(values: Partial<User> = {}): Promise<User> {
      return User.create({ type: 'user', brand_id: 1, email: newEmail('user'), firstname: 'Uma', lastname: 'User', ...values });
    },
    /** An article in `category` (a new type and category when not given), by a new operator. */
    async article(body: Record<string, unknown> = {}): Promise<any> {
      const category = body.category ?? [(await f.category((await f.type()).id)).id];
      const author = body.author_id ?? (await f.operator()).id;
      return expectSuccess(await api.post('/api/selfservice/article', {
        author_id: author, title: unique('Article'), text: 'Some helpful text.', ...body, category,
      }), 'Successfully created new article!');
    },
  };
  return f;
}
